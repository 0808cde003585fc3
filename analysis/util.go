package analysis

import "time"

func usToTime(us int64) time.Time { return time.UnixMicro(us).UTC() }
