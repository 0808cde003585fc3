-- analysis: when the log begins (microseconds since the epoch): the replay starts there with every slot free.
SELECT epoch_us(min(ts)) AS log_start_us FROM requests;
