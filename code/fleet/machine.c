/* Tangled from chapters/92-measuring.nw; edit the chapter, not this file. */
#include <unistd.h>

#include "fleet.h"

const Gpu *machine_part(const char *command, const char *path)
{
    static Gpu core;
    double peak, copy, p2p;
    if (machine_figure(command, "--machine", path, "peak_flops_per_core",
                       &peak) != 0
        || machine_figure(command, "--machine", path,
                          "memcpy_bytes_per_second", &copy) != 0
        || machine_figure(command, "--machine", path, "p2p_bytes_per_second",
                          &p2p) != 0)
        return NULL;
    double cores = (double)sysconf(_SC_NPROCESSORS_ONLN);
    double memory = (double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
    core = (Gpu){ "machine", "one core of this machine", memory / cores, peak,
                  copy, cores, p2p, p2p, copy, 0 };
    return &core;
}
