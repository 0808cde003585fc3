package textmatch

// MeasureChunkPairs lets the tests cut the candidates into many chunks.
var MeasureChunkPairs = &measureChunkPairs

// ChunkRows lets the tests cut the pending rows into many chunks.
var ChunkRows = &chunkRows

// CountNewShared lets the tests count the tenants of chosen shingles.
var CountNewShared = countNewShared

// HitRows lets the tests read the prompts again in many ranges.
var HitRows = &hitRows
