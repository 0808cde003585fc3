-- join: forget the requests the previous join made (canonical rows have no joined_requests row and stay).
DELETE FROM requests WHERE row_id IN (SELECT row_id FROM joined_requests);
