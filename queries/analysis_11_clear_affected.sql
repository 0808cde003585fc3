-- analysis: forget the previous run's affected requests.
DELETE FROM affected_requests;
