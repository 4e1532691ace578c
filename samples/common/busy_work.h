// Straight-line busy work for the samples: each STEP is a multiply-add on a 64-bit value,
// with no branch or inner loop, so every instruction of a loop body using them runs once per
// iteration (replay finds a point in such a loop with one stop per earlier iteration).
#ifndef REWIND_SAMPLES_BUSY_WORK_H
#define REWIND_SAMPLES_BUSY_WORK_H

#define STEP(x) x = x * 2862933555777941757ULL + 3037000493ULL;
#define STEP8(x) STEP(x) STEP(x) STEP(x) STEP(x) STEP(x) STEP(x) STEP(x) STEP(x)
#define STEP64(x) STEP8(x) STEP8(x) STEP8(x) STEP8(x) STEP8(x) STEP8(x) STEP8(x) STEP8(x)

#endif
