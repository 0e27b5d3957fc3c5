// jemalloc from the system (`apt-get install libjemalloc-dev`): the geoworker executable links it so that
// every allocation in the process (Swift's, librdkafka's, SQLite's) goes through it rather than glibc's malloc.
#include <jemalloc/jemalloc.h>
