// zlib (Debian's zlib1g-dev): the deflate stream and CRC-32 of a PNG.
#include <zlib.h>
