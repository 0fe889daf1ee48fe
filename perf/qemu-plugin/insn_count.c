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
 *
 * Block profile (`profile=PATH`): per translation block (a TB: a straight run of guest code
 * ending at a control transfer, a page end or qemu's size limit; keyed by start address and
 * instruction count, so retranslations share a record) an execution callback counts its
 * executions up to the marker and looks at which block runs next: when that block does not
 * start right after this block's last instruction, control was transferred ("taken"). For
 * blocks ending in a conditional branch, a 2-bit saturating counter per branch (starting weakly
 * not-taken) predicts each outcome and counts the mispredictions. The file has a header line
 * and then one line per block executed at least once:
 *   <start pc hex> <instructions> <executions> <taken> <mispredicted> <end kind>
 * with end kind 0 (no control transfer), 1 (conditional branch), 2 (direct jump or call),
 * 3 (indirect jump, call or return), 4 (other: system call, ...). By construction
 * sum(instructions * executions) equals `insns`. The callback costs host time on every
 * executed block, so it is only installed when a profile is asked for.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the subset of qemu-plugin.h we use (ABI of QEMU_PLUGIN_VERSION 1) ---- */
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* only passed through */
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
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
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);

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
static char profile_file[4096];

/* ---- the block profile ---- */
enum end_kind { END_NONE, END_BRANCH, END_JUMP, END_INDIRECT, END_OTHER };

struct block {
    uint64_t pc, end; /* first instruction; address right after the last one */
    uint64_t n_insns, execs, taken, mispredicted;
    int kind;
    int counter; /* 2-bit branch predictor state: 0, 1 predict not taken; 2, 3 taken */
    struct block *next_in_bucket;
};

#define BUCKETS 65536
static struct block *buckets[BUCKETS];
static struct block *previous; /* the block executed last, while profiling */
static int profiling;           /* 1 from the start until the marker */

/* What the instruction ending a block does (RV64GC encodings). */
static int classify_end(const uint8_t *p, size_t size) {
    if (size == 2) {
        unsigned h = p[0] | (unsigned)p[1] << 8;
        unsigned quadrant = h & 3, funct3 = h >> 13;
        if (quadrant == 1 && (funct3 == 6 || funct3 == 7)) return END_BRANCH; /* c.beqz/c.bnez */
        if (quadrant == 1 && funct3 == 5) return END_JUMP;                    /* c.j */
        if (quadrant == 2 && funct3 == 4 && ((h >> 7) & 31) != 0 && ((h >> 2) & 31) == 0)
            return END_INDIRECT; /* c.jr / c.jalr */
        return END_NONE;
    }
    if (size != 4) return END_OTHER;
    unsigned opcode = p[0] & 0x7f;
    switch (opcode) {
    case 0x63: return END_BRANCH;
    case 0x6f: return END_JUMP;
    case 0x67: return END_INDIRECT;
    case 0x73: return END_OTHER; /* ecall, ebreak, csr */
    default: return END_NONE;
    }
}

static struct block *lookup(uint64_t pc, uint64_t n) {
    size_t b = (size_t)((pc >> 1) ^ (pc >> 17) ^ (n * 0x9e37u)) & (BUCKETS - 1);
    for (struct block *x = buckets[b]; x; x = x->next_in_bucket)
        if (x->pc == pc && x->n_insns == n) return x;
    struct block *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->pc = pc;
    x->n_insns = n;
    x->counter = 1;
    x->next_in_bucket = buckets[b];
    buckets[b] = x;
    return x;
}

static void on_block_exec(unsigned int vcpu, void *udata) {
    (void)vcpu;
    struct block *b = udata;
    if (!profiling) return;
    b->execs++;
    struct block *p = previous;
    previous = b;
    if (!p) return;
    int taken = b->pc != p->end;
    p->taken += taken;
    if (p->kind == END_BRANCH) {
        int predicted = p->counter >= 2;
        p->mispredicted += predicted != taken;
        if (taken && p->counter < 3) p->counter++;
        if (!taken && p->counter > 0) p->counter--;
    }
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total, n);
    if (!profile_file[0] || n == 0) return;
    struct block *b = lookup(qemu_plugin_tb_vaddr(tb), n);
    if (!b) return;
    struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
    size_t size = qemu_plugin_insn_size(last);
    b->end = qemu_plugin_insn_vaddr(last) + size;
    b->kind = classify_end(qemu_plugin_insn_data(last), size);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void write_profile(void) {
    FILE *f = fopen(profile_file, "w");
    if (!f) {
        fprintf(stderr, "insn_count: cannot write %s\n", profile_file);
        return;
    }
    fputs("# pc insns execs taken mispredicted kind\n", f);
    for (size_t i = 0; i < BUCKETS; i++)
        for (struct block *x = buckets[i]; x; x = x->next_in_bucket)
            if (x->execs)
                fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n",
                        x->pc, x->n_insns, x->execs, x->taken, x->mispredicted, x->kind);
    fclose(f);
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8) {
    (void)id, (void)vcpu, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7, (void)a8;
    if (num == SYSY_EXIT_MARKER_SYSCALL && a1 == SYSY_EXIT_MARKER_ARG && !marker_seen) {
        marker_seen = 1;
        at_marker = total;
        profiling = 0;
    }
}

static void report_at_exit(qemu_plugin_id_t id, void *userdata) {
    (void)id, (void)userdata;
    if (profile_file[0]) write_profile();
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
        } else if (strncmp(argv[i], "profile=", 8) == 0) {
            snprintf(profile_file, sizeof profile_file, "%s", argv[i] + 8);
        } else {
            fprintf(stderr, "insn_count: unknown argument '%s' (expected outfile=PATH or profile=PATH)\n",
                    argv[i]);
            return -1;
        }
    }
    profiling = 1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, report_at_exit, NULL);
    return 0;
}
