-- analysis: forget the previous run's tenants.
DELETE FROM tenants;
