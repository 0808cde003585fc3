-- sweep_days.csv: per UTC day of the response and model, responses with logged text and those that leak, with their distinct source and recipient tenants.
SELECT strftime(day, '%Y-%m-%d') AS day, model, responses, leaking_responses, source_tenants, recipient_tenants
FROM sweep_days
ORDER BY day, model;
