package textmatch

// MeasureChunkPairs lets the tests cut the candidates into many chunks.
var MeasureChunkPairs = &measureChunkPairs

// ChunkRows lets the tests cut the pending rows into many chunks.
var ChunkRows = &chunkRows
