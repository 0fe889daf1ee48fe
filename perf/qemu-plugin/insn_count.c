/* insn_count.c: a qemu TCG plugin counting the guest instructions a program executes.
 *
 * Debian's qemu-user 7.2 loads plugins (`-plugin FILE.so,ARG=...`) but ships no
 * `qemu-plugin.h`, so the few API entries used here are declared by hand, matching
 * QEMU_PLUGIN_VERSION 1 (qemu 6.x-7.x).
 *
 * Counting: at translation every translation block gets an inline "add n_insns to `total`"
 * op, which costs one host add per executed block and no callback. A block that faults
 * midway is still counted whole; SysY programs do not fault on the measured path.
 *
 * Where counting stops: our runtime (runtime/sylib.c) makes a marker system call
 * (a7 = SYSY_EXIT_MARKER_SYSCALL, a0 = SYSY_EXIT_MARKER_ARG, see sylib.h) from its exit
 * destructor, after stdout is flushed and before the timer report is printed to stderr.
 * The syscall callback snapshots `total` at the first marker, so the report (whose length
 * depends on the measured times) adds no noise. A program that never reaches the marker
 * (killed, or linked with another runtime) is counted up to its exit.
 *
 * Arguments: `outfile=PATH` writes the result there instead of qemu's log
 * (`qemu_plugin_outs` prints only with `-d plugin`). Output, one `key: value` per line:
 *   insns: <count up to the marker, or up to exit without one>
 *   total: <count up to exit>
 *   marker: <1 if the marker was seen, else 0>
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- the subset of qemu-plugin.h we use (ABI of QEMU_PLUGIN_VERSION 1) ---- */
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* only passed through */
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index,
                                              int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
                                              uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7,
                                              uint64_t a8);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* ---- keep in sync with runtime/sylib.h ---- */
#define SYSY_EXIT_MARKER_SYSCALL 0x5359
#define SYSY_EXIT_MARKER_ARG 0x7379737963ULL
#define RISCV_SYS_EXIT 93
#define RISCV_SYS_EXIT_GROUP 94

static uint64_t total;
static uint64_t at_marker;
static int marker_seen;
static char outfile[4096];

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total,
                                             qemu_plugin_tb_n_insns(tb));
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8) {
    (void)id, (void)vcpu, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7, (void)a8;
    if (num == SYSY_EXIT_MARKER_SYSCALL && a1 == SYSY_EXIT_MARKER_ARG && !marker_seen) {
        marker_seen = 1;
        at_marker = total;
    }
}

static void report_at_exit(qemu_plugin_id_t id, void *userdata) {
    (void)id, (void)userdata;
    char buf[256];
    snprintf(buf, sizeof buf, "insns: %" PRIu64 "\ntotal: %" PRIu64 "\nmarker: %d\n",
             marker_seen ? at_marker : total, total, marker_seen);
    FILE *f = outfile[0] ? fopen(outfile, "w") : NULL;
    if (f) {
        fputs(buf, f);
        fclose(f);
    } else {
        qemu_plugin_outs(buf);
    }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t *info, int argc,
                                                               char **argv) {
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "outfile=", 8) == 0) {
            snprintf(outfile, sizeof outfile, "%s", argv[i] + 8);
        } else {
            fprintf(stderr, "insn_count: unknown argument '%s' (expected outfile=PATH)\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, report_at_exit, NULL);
    return 0;
}
