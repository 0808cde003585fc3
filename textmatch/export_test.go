package textmatch

// MeasureChunkPairs lets the tests cut the candidates into many chunks.
var MeasureChunkPairs = &measureChunkPairs
