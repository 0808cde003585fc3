-- evidence: drop the ranges' tenants once text_spec holds their counts.
DROP TABLE IF EXISTS text_spec_parts;
