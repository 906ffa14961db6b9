/*
 * got_hook.c - redirect one imported function of one loaded shared object
 * by rewriting its GOT slot (see got_hook.h).
 *
 * Why it exists: nic/quiesce.c must run code of its own before DPDK's
 * memif driver unmaps a region the polling thread may be reading.
 * Design: docs/design.md#memifs-munmap-is-hooked-in-the-drivers-got-only
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nic/got_hook.h"

/*
 * Owns the ELF walk: find the object among the loaded ones
 * (dl_iterate_phdr), read its dynamic section, find the relocations of
 * the PLT (DT_JMPREL) and of data (DT_RELA) that bind the symbol
 * (JUMP_SLOT, GLOB_DAT), and write the replacement into each slot, making
 * the page writable for the moment it takes (objects linked with
 * -z relro -z now, as Debian builds DPDK, have a read-only GOT).
 * Only the object named is affected: every other caller still reaches the
 * real function.
 */

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#else
#error "got_hook.c: only x86-64 and AArch64 (Elf64_Rela) are supported"
#endif

struct find {
    const char *object;
    const char *symbol;
    void *replacement;
    void *original;
    int found_object;
    int patched;
    int rc;
    char *err;
    size_t errlen;
};

/* A d_ptr of the dynamic section: glibc relocates most of them in place;
 * an unrelocated one is an offset from the load address. */
static uintptr_t dyn_addr(ElfW(Addr) base, ElfW(Addr) v)
{
    return v < base ? base + v : v;
}

/* Is addr inside one of the object's PT_GNU_RELRO ranges (read-only once
 * relocated)? */
static int in_relro(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_RELRO)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (addr >= lo && addr < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

static int write_slot(struct find *f, const struct dl_phdr_info *info, void **slot)
{
    if (*slot == f->replacement) { /* hooked already: keep the real original */
        f->patched++;
        return 0;
    }
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)slot & ~((uintptr_t)page - 1);
    if (mprotect((void *)start, (size_t)page, PROT_READ | PROT_WRITE) != 0) {
        int e = errno;
        snprintf(f->err, f->errlen, "%s: mprotect of its GOT failed: %s", info->dlpi_name, strerror(e));
        return -e;
    }
    if (f->original == NULL)
        f->original = *slot;
    __atomic_store_n(slot, f->replacement, __ATOMIC_RELEASE);
    if (in_relro(info, (uintptr_t)slot))
        mprotect((void *)start, (size_t)page, PROT_READ);
    f->patched++;
    return 0;
}

/* Patch every slot of table (relocations with addend) bound to f->symbol. */
static int patch_table(struct find *f, const struct dl_phdr_info *info, const ElfW(Rela) *rel, size_t bytes,
                       const ElfW(Sym) *symtab, const char *strtab)
{
    size_t n = bytes / sizeof(*rel);
    for (size_t i = 0; i < n; i++) {
        unsigned long type = ELF64_R_TYPE(rel[i].r_info);
        unsigned long sym = ELF64_R_SYM(rel[i].r_info);
        if ((type != R_JUMP_SLOT && type != R_GLOB_DAT) || sym == 0)
            continue;
        if (strcmp(strtab + symtab[sym].st_name, f->symbol) != 0)
            continue;
        int rc = write_slot(f, info, (void **)(info->dlpi_addr + rel[i].r_offset));
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find *f = arg;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, f->object) == NULL)
        return 0;
    f->found_object = 1;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (dyn == NULL) {
        snprintf(f->err, f->errlen, "%s has no dynamic section", info->dlpi_name);
        f->rc = -ENOEXEC;
        return 1;
    }
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmprel_sz = 0, rela_sz = 0;
    long pltrel = DT_RELA;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprel_sz = dyn->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)dyn->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr); break;
        case DT_RELASZ: rela_sz = dyn->d_un.d_val; break;
        default: break;
        }
    }
    if (symtab == NULL || strtab == NULL || pltrel != DT_RELA) {
        snprintf(f->err, f->errlen, "%s: no symbol table or no RELA relocations", info->dlpi_name);
        f->rc = -ENOEXEC;
        return 1;
    }
    int rc = 0;
    if (jmprel != NULL)
        rc = patch_table(f, info, jmprel, jmprel_sz, symtab, strtab);
    if (rc == 0 && rela != NULL)
        rc = patch_table(f, info, rela, rela_sz, symtab, strtab);
    f->rc = rc;
    if (rc == 0 && f->patched == 0) {
        snprintf(f->err, f->errlen, "%s does not import %s", info->dlpi_name, f->symbol);
        f->rc = -ENOENT;
    }
    return 1;
}

int got_hook(const char *object, const char *symbol, void *replacement, void **original, char *err,
             size_t errlen)
{
    struct find f = {.object = object, .symbol = symbol, .replacement = replacement, .err = err, .errlen = errlen};
    dl_iterate_phdr(visit, &f);
    if (!f.found_object) {
        snprintf(err, errlen, "no loaded object matches %s", object);
        return -ENOENT;
    }
    if (f.rc == 0)
        *original = f.original;
    return f.rc;
}
