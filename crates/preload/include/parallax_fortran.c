/* The C side of Parallax's Fortran module (parallax.f90): Fortran strings
 * (pointer and length) made C strings, and the region nesting kept per
 * thread so that an END pairs with its BEGIN whether or not that BEGIN was
 * recorded. Compiled into libparallax_api.a by scripts/install.sh.
 *
 * Like parallax.h it refers to the interposition library weakly: a program
 * linked with it runs unchanged without Parallax. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parallax.h"

/* Names longer than this are cut. */
#define NAME_MAX_ 255
/* Regions nested deeper than this are not recorded. */
#define DEPTH_MAX_ 1024

static __thread uint64_t entered_bits[DEPTH_MAX_ / 64];
static __thread int depth;

static void c_name(char *out, const char *name, size_t len) {
    while (len > 0 && name[len - 1] == ' ') /* Fortran pads with blanks */
        len--;
    if (len > NAME_MAX_)
        len = NAME_MAX_;
    memcpy(out, name, len);
    out[len] = 0;
}

static uint32_t region_id(uint32_t *id, const char *name, size_t len, int kind) {
    if (*id == 0 && parallax_pl_region_at) {
        char n[NAME_MAX_ + 1];
        c_name(n, name, len);
        *id = parallax_pl_region_at(n, kind, "", 0);
    }
    return *id;
}

void parallax_fortran_begin(uint32_t *id, const char *name, size_t len, int kind) {
    int d = depth++;
    int rec = 0;
    if (d < DEPTH_MAX_ && parallax_pl_enter && region_id(id, name, len, kind))
        rec = parallax_pl_enter(*id) != 0;
    if (d < DEPTH_MAX_) {
        uint64_t bit = (uint64_t)1 << (d % 64);
        entered_bits[d / 64] = rec ? entered_bits[d / 64] | bit : entered_bits[d / 64] & ~bit;
    }
}

void parallax_fortran_end(void) {
    if (depth == 0)
        return;
    int d = --depth;
    if (d < DEPTH_MAX_ && (entered_bits[d / 64] >> (d % 64) & 1))
        parallax_pl_leave();
}

void parallax_fortran_mark(uint32_t *id, const char *name, size_t len, int64_t value) {
    if (parallax_pl_event && region_id(id, name, len, 27))
        parallax_pl_event(30, *id, (uint64_t)value, 0, 0, 0);
}

void parallax_fortran_flow(int on) { on ? parallax_flow_on() : parallax_flow_off(); }
