-- notify: empty the notices table before a draft run rewrites it.
DELETE FROM notices;
