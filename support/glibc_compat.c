/*===- support/glibc_compat.c - What newer glibc adds, over glibc 2.28 ----===*
 *
 * A binary linked against glibc 2.28's stubs (KILN_GLIBC_LINK_ENVIRONMENT)
 * still contains static libraries that Debian built against its own glibc:
 * libstdc++, libgcc's unwinder and LLVM call a few functions glibc added
 * later. Each is defined here over what 2.28 has, hidden, so that it binds
 * inside the binary that links it and never stands in for glibc's own in
 * anyone else's code.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define KILN_COMPAT __attribute__((visibility("hidden")))

/* libstdc++ (glibc 2.32) skips atomic reference counts while this is
 * nonzero; zero, "maybe several threads", is always correct. */
KILN_COMPAT char __libc_single_threaded = 0;

/* LLVM's memory statistics (glibc 2.33): mallinfo's counters, which are
 * int, widened. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
KILN_COMPAT struct mallinfo2 mallinfo2(void) {
  struct mallinfo narrow = mallinfo();
  struct mallinfo2 wide = {
      .arena = (unsigned)narrow.arena,
      .ordblks = (unsigned)narrow.ordblks,
      .smblks = (unsigned)narrow.smblks,
      .hblks = (unsigned)narrow.hblks,
      .hblkhd = (unsigned)narrow.hblkhd,
      .usmblks = (unsigned)narrow.usmblks,
      .fsmblks = (unsigned)narrow.fsmblks,
      .uordblks = (unsigned)narrow.uordblks,
      .fordblks = (unsigned)narrow.fordblks,
      .keepcost = (unsigned)narrow.keepcost,
  };
  return wide;
}
#pragma GCC diagnostic pop

/* std::random_device and LLVM's random seeds (glibc 2.36): the kernel's
 * random numbers, as glibc's arc4random reads them. */
KILN_COMPAT uint32_t arc4random(void) {
  uint32_t value = 0;
  size_t filled = 0;
  while (filled < sizeof value) {
    ssize_t read = getrandom((char *)&value + filled, sizeof value - filled, 0);
    if (read > 0)
      filled += (size_t)read;
    else if (read < 0 && errno != EINTR)
      break;
  }
  return value;
}

/* std::condition_variable's waits on the steady clock (glibc 2.30): the
 * same wait, its deadline moved to the realtime clock 2.28 waits on. */
KILN_COMPAT int pthread_cond_clockwait(pthread_cond_t *condition, pthread_mutex_t *mutex,
                                       clockid_t clock, const struct timespec *deadline) {
  if (clock == CLOCK_REALTIME)
    return pthread_cond_timedwait(condition, mutex, deadline);
  struct timespec now, realNow;
  clock_gettime(clock, &now);
  clock_gettime(CLOCK_REALTIME, &realNow);
  long long left =
      (long long)(deadline->tv_sec - now.tv_sec) * 1000000000LL + (deadline->tv_nsec - now.tv_nsec);
  if (left < 0)
    left = 0;
  long long realNanoseconds = realNow.tv_nsec + left;
  struct timespec realDeadline = {
      .tv_sec = realNow.tv_sec + (time_t)(realNanoseconds / 1000000000LL),
      .tv_nsec = (long)(realNanoseconds % 1000000000LL),
  };
  return pthread_cond_timedwait(condition, mutex, &realDeadline);
}

/* libgcc's unwinder finds the frame tables of the object holding a return
 * address with _dl_find_object (glibc 2.35); dl_iterate_phdr tells the
 * same: the object whose loaded segments hold the address, and its
 * PT_GNU_EH_FRAME. */
struct ObjectSearch {
  uintptr_t address;
  struct dl_find_object *found;
};

static int matchObject(struct dl_phdr_info *object, size_t size, void *data) {
  (void)size;
  struct ObjectSearch *search = data;
  uintptr_t low = UINTPTR_MAX, high = 0;
  void *frameTables = NULL;
  int holdsAddress = 0;
  for (int i = 0; i < object->dlpi_phnum; ++i) {
    const ElfW(Phdr) *segment = &object->dlpi_phdr[i];
    uintptr_t start = object->dlpi_addr + segment->p_vaddr;
    if (segment->p_type == PT_LOAD) {
      if (start < low)
        low = start;
      if (start + segment->p_memsz > high)
        high = start + segment->p_memsz;
      if (search->address >= start && search->address < start + segment->p_memsz)
        holdsAddress = 1;
    } else if (segment->p_type == PT_GNU_EH_FRAME) {
      frameTables = (void *)start;
    }
  }
  if (!holdsAddress)
    return 0;
  memset(search->found, 0, sizeof *search->found);
  search->found->dlfo_map_start = (void *)low;
  search->found->dlfo_map_end = (void *)high;
  search->found->dlfo_eh_frame = frameTables;
  return 1;
}

KILN_COMPAT int _dl_find_object(void *address, struct dl_find_object *found) {
  struct ObjectSearch search = {(uintptr_t)address, found};
  return dl_iterate_phdr(matchObject, &search) ? 0 : -1;
}
