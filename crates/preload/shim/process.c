/* A process image that ends without exit(): _exit and _Exit, which skip the
 * atexit handlers that write a measurement out, and exec, which replaces
 * the program. Each wrapper writes what the process recorded first
 * (parallax_pl_image_ends: no allocation, no waiting, since _exit may be
 * called from a signal handler) and then calls the real function.
 *
 * A program started by exec from a process that measured gets
 * PARALLAX_REPLACED_PID=<pid> in its environment: it is then measured as a
 * process of its own (a rank of its own), and the rank of the image it
 * replaced keeps what that image recorded. The environment the caller
 * passed is not changed: a copy is given to the real exec. In a child made
 * by vfork (which shares its parent's memory until it calls exec or _exit)
 * nothing is done.
 *
 * Why C: execl, execlp and execle are variadic. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pxl.h"

extern char **environ;

typedef void (*exit_t)(int);
typedef int (*execve_t)(const char *, char *const[], char *const[]);
typedef int (*fexecve_t)(int, char *const[], char *const[]);

/* The real functions, found when the library is loaded: a child made by
 * vfork must not look them up (the loader's lock and memory are its
 * parent's). */
static exit_t real__exit, real__Exit;
static execve_t real_execve, real_execvpe;
static fexecve_t real_fexecve;

static void *next(const char *name) {
    return dlsym(RTLD_NEXT, name);
}

__attribute__((constructor)) static void pxl_process_init(void) {
    real__exit = (exit_t)next("_exit");
    real__Exit = (exit_t)next("_Exit");
    real_execve = (execve_t)next("execve");
    real_execvpe = (execve_t)next("execvpe");
    real_fexecve = (fexecve_t)next("fexecve");
}

/* === _exit === */

/* A function called before the library's constructor ran (from another
 * library's) finds the real functions then. */
#define ENSURE(real)              \
    do {                          \
        if (!(real))              \
            pxl_process_init();   \
    } while (0)

__attribute__((noreturn)) static void end_now(exit_t *real, int status) {
    parallax_pl_image_ends();
    ENSURE(*real);
    if (*real)
        (*real)(status);
    syscall(SYS_exit_group, status);
    for (;;)
        ;
}

void _exit(int status) {
    end_now(&real__exit, status);
}

void _Exit(int status) {
    end_now(&real__Exit, status);
}

/* === exec === */

#define MARK "PARALLAX_REPLACED_PID="

/* `env` with PARALLAX_REPLACED_PID set to this process, in `*copy` (NULL
 * when nothing changes: this process never measured, or no memory: the
 * new program is then measured as if it had no measured past). */
static char *const *marked(char *const *env, char ***copy, char *mark, size_t room) {
    *copy = NULL;
    if (!parallax_pl_image_ends())
        return env;
    size_t n = 0;
    while (env && env[n])
        n++;
    char **out = malloc((n + 2) * sizeof *out);
    if (!out)
        return env;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(env[i], MARK, sizeof MARK - 1) != 0)
            out[k++] = env[i];
    /* MARK and the pid, written without stdio. */
    char digits[16];
    int d = 0;
    for (unsigned long pid = (unsigned long)getpid(); pid > 0 || d == 0; pid /= 10)
        digits[d++] = (char)('0' + pid % 10);
    if (sizeof MARK + (size_t)d > room) {
        free(out);
        return env;
    }
    memcpy(mark, MARK, sizeof MARK - 1);
    for (int i = 0; i < d; i++)
        mark[sizeof MARK - 1 + i] = digits[d - 1 - i];
    mark[sizeof MARK - 1 + d] = 0;
    out[k++] = mark;
    out[k] = NULL;
    *copy = out;
    return out;
}

/* Calls the real exec `real` (execve or execvpe) with a marked
 * environment; returns only if it failed, with its errno. */
static int run(execve_t *real, const char *file, char *const argv[], char *const envp[]) {
    char mark[64];
    char **copy;
    char *const *env = marked(envp, &copy, mark, sizeof mark);
    ENSURE(*real);
    int r = -1;
    if (*real)
        r = (*real)(file, argv, env);
    else
        errno = ENOSYS;
    int e = errno;
    free(copy);
    errno = e;
    return r;
}

int execve(const char *path, char *const argv[], char *const envp[]) {
    return run(&real_execve, path, argv, envp);
}

int execv(const char *path, char *const argv[]) {
    return run(&real_execve, path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[]) {
    return run(&real_execvpe, file, argv, envp);
}

int execvp(const char *file, char *const argv[]) {
    return run(&real_execvpe, file, argv, environ);
}

int fexecve(int fd, char *const argv[], char *const envp[]) {
    char mark[64];
    char **copy;
    char *const *env = marked(envp, &copy, mark, sizeof mark);
    ENSURE(real_fexecve);
    int r = -1;
    if (real_fexecve)
        r = real_fexecve(fd, argv, env);
    else
        errno = ENOSYS;
    int e = errno;
    free(copy);
    errno = e;
    return r;
}

/* The arguments of execl and friends, from `first` up to the NULL, as an
 * array `argv` on the stack; `ap` is left after the NULL. */
#define GATHER(first, argv, ap)                                      \
    size_t count = 1;                                                \
    va_start(ap, first);                                             \
    while (va_arg(ap, char *))                                       \
        count++;                                                     \
    va_end(ap);                                                      \
    char *argv[count + 1];                                           \
    argv[0] = (char *)(first);                                       \
    va_start(ap, first);                                             \
    for (size_t i = 1; i <= count; i++)                              \
        argv[i] = va_arg(ap, char *)

int execl(const char *path, const char *arg, ...) {
    va_list ap;
    GATHER(arg, argv, ap);
    va_end(ap);
    return run(&real_execve, path, argv, environ);
}

int execlp(const char *file, const char *arg, ...) {
    va_list ap;
    GATHER(arg, argv, ap);
    va_end(ap);
    return run(&real_execvpe, file, argv, environ);
}

int execle(const char *path, const char *arg, ...) {
    va_list ap;
    GATHER(arg, argv, ap);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return run(&real_execve, path, argv, envp);
}
