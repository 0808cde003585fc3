-- sweep: the allocator's default again.
RESET allocator_background_threads;
