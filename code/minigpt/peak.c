/* Tangled from chapters/94-trainer-plumbing.nw; edit the chapter, not this file. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "minigpt.h"

double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { CHAINS = 16, WIDTH = 16, ROUNDS = 4096 };

double measure_peak_flops(double seconds)
{
    float acc[CHAINS][WIDTH];
    for (int c = 0; c < CHAINS; c++)
        for (int j = 0; j < WIDTH; j++)
            acc[c][j] = (float)(c + j) * 1e-3f;
    const float x = 0.9999999f, y = 1e-7f;
    double started = seconds_now(), elapsed;
    long rounds = 0;
    do {
        for (int r = 0; r < ROUNDS; r++)
            for (int c = 0; c < CHAINS; c++)
                for (int j = 0; j < WIDTH; j++)
                    acc[c][j] = acc[c][j] * x + y;
        rounds += ROUNDS;
        elapsed = seconds_now() - started;
    } while (elapsed < seconds);
    volatile float sink = 0.0f;         /* keep the work from vanishing */
    for (int c = 0; c < CHAINS; c++)
        for (int j = 0; j < WIDTH; j++)
            sink += acc[c][j];
    (void)sink;
    return 2.0 * CHAINS * WIDTH * (double)rounds / elapsed;
}

const char *cpu_name(char *buffer, size_t size)
{
    snprintf(buffer, size, "an unnamed processor");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return buffer;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon != NULL) {
                colon += 2;
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(buffer, size, "%s", colon);
            }
            break;
        }
    fclose(f);
    return buffer;
}
