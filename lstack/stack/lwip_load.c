/*
 * lwip_load.c - a private copy of liblstack_lwip.so per stack (see
 * lwip_load.h): the library copied into a memfd, dlopen'd RTLD_LOCAL, every
 * entry point of lwip_api.def resolved into the stack's table. The
 * stack's opening thread; errors are reported into the caller's buffer.
 */
#include "stack/lwip_load.h"

#include <dlfcn.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where each call of lwip_api.def lives in struct lwip_api. */
static const struct {
    const char *name;
    size_t offset;
} lwip_syms[] = {
#define LWIP_FN(ret, name, params) {#name, offsetof(struct lwip_api, name)},
#include "stack/lwip_api.def"
#undef LWIP_FN
};

/* Copy the file at path into a new memfd. Returns the fd or -1. */
static int copy_to_memfd(const char *path, const char *tag, char *err, size_t errlen)
{
    int src = open(path, O_RDONLY | O_CLOEXEC);
    if (src < 0) {
        snprintf(err, errlen, "cannot open lwIP library %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int mfd = -1;
    if (fstat(src, &st) != 0) {
        snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
        goto out;
    }
    mfd = memfd_create(tag, MFD_CLOEXEC);
    if (mfd < 0) {
        snprintf(err, errlen, "memfd_create: %s", strerror(errno));
        goto out;
    }
    off_t off = 0;
    while (off < st.st_size) {
        ssize_t n = sendfile(mfd, src, &off, (size_t)(st.st_size - off));
        if (n <= 0) {
            snprintf(err, errlen, "copying %s: %s", path, n < 0 ? strerror(errno) : "short file");
            close(mfd);
            mfd = -1;
            goto out;
        }
    }
out:
    close(src);
    return mfd;
}

#define LWIP_LIB_NAME "liblstack_lwip.so"

/* Where the lwIP library is, when the caller names none: $LSTACK_LWIP_LIB;
 * else the first directory holding liblstack_lwip.so along the path the
 * dynamic loader searches for a dlopen by the object this code is linked
 * into (liblstack.so, lstackd, a test): that object's RPATH,
 * $LD_LIBRARY_PATH, its RUNPATH, the system's directories. An installed
 * object finds it through a RUNPATH relative to itself ($ORIGIN/lstack
 * from liblstack.so); in a build tree the RUNPATH leads to the build's
 * folder, and meson replaces it at install. Returns the path (env or buf),
 * or NULL with the directories searched in err. */
static const char *default_path(char *buf, size_t len, char *err, size_t errlen)
{
    const char *env = getenv("LSTACK_LWIP_LIB");
    if (env != NULL && env[0] != '\0')
        return env;
    Dl_info info;
    struct link_map *self = NULL;
    if (dladdr1((void *)default_path, &info, (void **)&self, RTLD_DL_LINKMAP) == 0 || self == NULL) {
        snprintf(err, errlen, "cannot tell which object holds the lwIP loader; set LSTACK_LWIP_LIB");
        return NULL;
    }
    /* The handle of that object: the program's own map has no name. */
    void *h = self->l_name[0] == '\0' ? dlopen(NULL, RTLD_LAZY) : dlopen(self->l_name, RTLD_LAZY | RTLD_NOLOAD);
    Dl_serinfo size;
    Dl_serinfo *si = NULL;
    if (h == NULL || dlinfo(h, RTLD_DI_SERINFOSIZE, &size) != 0 || (si = malloc(size.dls_size)) == NULL) {
        snprintf(err, errlen, "cannot read the library search path of %s; set LSTACK_LWIP_LIB",
                 self->l_name[0] != '\0' ? self->l_name : "the program");
        if (h != NULL)
            dlclose(h);
        return NULL;
    }
    memcpy(si, &size, sizeof(size));
    const char *found = NULL;
    if (dlinfo(h, RTLD_DI_SERINFO, si) == 0) {
        for (unsigned i = 0; i < si->dls_cnt && found == NULL; i++) {
            snprintf(buf, len, "%s/%s", si->dls_serpath[i].dls_name, LWIP_LIB_NAME);
            if (access(buf, R_OK) == 0)
                found = buf;
        }
    }
    if (found == NULL) {
        int n = snprintf(err, errlen, "%s not found in the library search path of %s (", LWIP_LIB_NAME,
                         self->l_name[0] != '\0' ? self->l_name : "the program");
        for (unsigned i = 0; i < si->dls_cnt && n >= 0 && (size_t)n < errlen; i++)
            n += snprintf(err + n, errlen - (size_t)n, "%s%s", i > 0 ? ":" : "", si->dls_serpath[i].dls_name);
        if (n >= 0 && (size_t)n < errlen)
            snprintf(err + n, errlen - (size_t)n, "); set LSTACK_LWIP_LIB");
    }
    free(si);
    dlclose(h);
    return found;
}

int lwip_load(struct lwip_api *api, const char *path, const char *tag, char *err, size_t errlen)
{
    memset(api, 0, sizeof(*api));
    char found[PATH_MAX + 32];
    if (path == NULL && (path = default_path(found, sizeof(found), err, errlen)) == NULL) {
        errno = ENOENT;
        return -1;
    }
    int fd = copy_to_memfd(path, tag, err, errlen);
    if (fd < 0)
        return -1;
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    /* The fd stays open until lwip_unload: glibc matches a dlopen name
     * against loaded objects, so a reused fd number would hand back an
     * earlier copy instead of loading this one. */
    void *h = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
    int saved = errno;
    if (h == NULL) {
        close(fd);
        snprintf(err, errlen, "dlopen of the lwIP copy of %s failed: %s", path, dlerror());
        errno = saved;
        return -1;
    }
    api->handle = h;
    api->fd = fd;
    for (size_t i = 0; i < sizeof(lwip_syms) / sizeof(lwip_syms[0]); i++) {
        void *fn = dlsym(h, lwip_syms[i].name);
        if (fn == NULL) {
            snprintf(err, errlen, "%s has no symbol %s (lwIP 2.1 expected)", path, lwip_syms[i].name);
            lwip_unload(api);
            errno = ENOENT;
            return -1;
        }
        /* POSIX: a dlsym result converts to a function pointer of its real
         * type. */
        memcpy((char *)api + lwip_syms[i].offset, &fn, sizeof(fn));
    }
    return 0;
}

void lwip_unload(struct lwip_api *api)
{
    if (api->handle != NULL) {
        dlclose(api->handle);
        close(api->fd);
    }
    memset(api, 0, sizeof(*api));
}
