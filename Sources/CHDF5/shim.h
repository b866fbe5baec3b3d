// Debian installs the serial HDF5 headers under /usr/include/hdf5/serial (pkg-config hdf5).
#include <hdf5.h>
