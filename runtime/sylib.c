/* sylib.c: the SysY runtime library (our implementation of the documented behaviour).
 *
 * Input and output go through C stdio, so getch/getint may be mixed freely and output is
 * buffered; integers are parsed and printed by hand with the unlocked stdio calls because the
 * performance cases read and write megabytes and every instruction counts under qemu.
 * At exit (a destructor, which runs after main returns and before stdio's own cleanup) we
 * flush stdout, make the marker system call that ends instruction counting (sylib.h), then print
 * the timer report to stderr. Keeps no state but the timer table.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include "sylib.h"

/* ---- input ---- */

static int is_space(int c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int getint(void) {
    int c = getchar_unlocked();
    while (is_space(c)) c = getchar_unlocked();
    int neg = 0;
    if (c == '-' || c == '+') {
        neg = c == '-';
        c = getchar_unlocked();
    }
    /* Unsigned accumulation: out-of-range input wraps instead of being undefined. */
    unsigned v = 0;
    while (c >= '0' && c <= '9') {
        v = v * 10u + (unsigned)(c - '0');
        c = getchar_unlocked();
    }
    if (c != EOF) ungetc(c, stdin);
    return (int)(neg ? 0u - v : v);
}

int getch(void) {
    return getchar_unlocked();
}

float getfloat(void) {
    /* glibc's scanf accepts decimal and C99 hexadecimal forms, inf and nan, like strtof. */
    float x = 0;
    if (scanf("%a", &x) != 1) return 0;
    return x;
}

int getarray(int a[]) {
    int n = getint();
    for (int i = 0; i < n; i++) a[i] = getint();
    return n;
}

int getfarray(float a[]) {
    int n = getint();
    for (int i = 0; i < n; i++) a[i] = getfloat();
    return n;
}

/* ---- output ---- */

void putint(int a) {
    char buf[12];
    int len = 0;
    unsigned v = a < 0 ? 0u - (unsigned)a : (unsigned)a;
    do {
        buf[len++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    if (a < 0) putchar_unlocked('-');
    while (len) putchar_unlocked(buf[--len]);
}

void putch(int a) {
    putchar_unlocked(a);
}

void putarray(int n, int a[]) {
    putint(n);
    putchar_unlocked(':');
    for (int i = 0; i < n; i++) {
        putchar_unlocked(' ');
        putint(a[i]);
    }
    putchar_unlocked('\n');
}

void putfloat(float a) {
    printf("%a", (double)a);
}

void putfarray(int n, float a[]) {
    putint(n);
    putchar_unlocked(':');
    for (int i = 0; i < n; i++) {
        putchar_unlocked(' ');
        putfloat(a[i]);
    }
    putchar_unlocked('\n');
}

void putf(char fmt[], ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

/* ---- timers ---- */

/* One row per distinct (start line, stop line) pair, in order of first stop; a program that
 * times more distinct pairs than fit has the excess added to the last row. */
#define MAX_TIMERS 1024
static struct { int start_line, stop_line; long long us; } timers[MAX_TIMERS];
static int num_timers;
static int open_line;
static struct timeval open_at;

void _sysy_starttime(int lineno) {
    open_line = lineno;
    gettimeofday(&open_at, 0);
}

void _sysy_stoptime(int lineno) {
    struct timeval now;
    gettimeofday(&now, 0);
    long long us = (now.tv_sec - open_at.tv_sec) * 1000000LL + (now.tv_usec - open_at.tv_usec);
    int i = 0;
    while (i < num_timers && !(timers[i].start_line == open_line && timers[i].stop_line == lineno))
        i++;
    if (i == num_timers) {
        if (num_timers == MAX_TIMERS) {
            i = MAX_TIMERS - 1;
        } else {
            num_timers++;
            timers[i].start_line = open_line;
            timers[i].stop_line = lineno;
        }
    }
    timers[i].us += us;
}

static void print_duration(long long us) {
    fprintf(stderr, "%lldH-%lldM-%lldS-%lldus\n", us / 3600000000LL, us / 60000000LL % 60,
            us / 1000000LL % 60, us % 1000000LL);
}

static void exit_marker(void) {
#if defined(__riscv) && defined(__linux__)
    register long a0 __asm__("a0") = (long)SYSY_EXIT_MARKER_ARG;
    register long a7 __asm__("a7") = SYSY_EXIT_MARKER_SYSCALL;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a7) : "memory");
#endif
}

__attribute__((destructor)) static void sysy_at_exit(void) {
    fflush(stdout);
    exit_marker();
    long long total = 0;
    for (int i = 0; i < num_timers; i++) {
        fprintf(stderr, "Timer@%04d-%04d: ", timers[i].start_line, timers[i].stop_line);
        print_duration(timers[i].us);
        total += timers[i].us;
    }
    fprintf(stderr, "TOTAL: ");
    print_duration(total);
}
