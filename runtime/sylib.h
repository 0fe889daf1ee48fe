/* sylib.h: the SysY runtime library interface.
 *
 * Declares the library functions every SysY program may call without a declaration, and the
 * `starttime()`/`stoptime()` macros. Including this header (`gcc -x c -include sylib.h f.sy`)
 * lets a C compiler build a SysY program as C, which the benchmarks use as a reference.
 * It includes no system header on purpose: SysY programs define names like `rand`, `sort` or
 * `min` that must not clash with libc declarations.
 */
#ifndef SYSY_SYLIB_H
#define SYSY_SYLIB_H

/* Input: scanf-like, skipping leading whitespace (getch reads one raw byte, -1 at end). */
int getint(void);
int getch(void);
float getfloat(void);
int getarray(int a[]);
int getfarray(float a[]);

/* Output to stdout; putfloat prints like printf("%a", (double)x). */
void putint(int a);
void putch(int a);
void putarray(int n, int a[]);
void putfloat(float a);
void putfarray(int n, float a[]);
void putf(char fmt[], ...);

/* Timers: accumulate wall time per (start line, stop line) pair, reported on stderr at exit. */
void _sysy_starttime(int lineno);
void _sysy_stoptime(int lineno);
#define starttime() _sysy_starttime(__LINE__)
#define stoptime() _sysy_stoptime(__LINE__)

/* `a7` of the marker system call the runtime makes right after `main` returns and stdout is
 * flushed, so an instruction counter (perf/qemu-plugin) stops before the timer report. The
 * number is not a Linux system call; the kernel (or qemu-user) answers -ENOSYS. `a0` carries
 * SYSY_EXIT_MARKER_ARG so a stray call with the same number is not taken for the marker. */
#define SYSY_EXIT_MARKER_SYSCALL 0x5359
#define SYSY_EXIT_MARKER_ARG 0x7379737963ULL /* "sysyc" */

#endif
