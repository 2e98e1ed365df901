/* A header comment */
#include <stdio.h>
#define MAX(a, b) ((a) > (b) ? (a) : (b))
typedef int (*handler_t)(int);
typedef Array(int) Ints;
struct point { int x, y; } __packed;
enum { A, B, C };
static const struct point table[] = {
  {1, 2},
  {3, 4},
#ifdef MORE
  {5, 6},
#endif
};
DEFINE_OP(add, "fadd")
#ifdef CONFIG_X
// Adds.
static int __init add(int a, int b) __acquires(x)
{
  if (a) {
    return b;
  } else if (b) {
    do { a++; } while (a < b);
  }
  switch (a) { case 1: return 2; default: break; }
  return a + b;
}
#endif
EXPORT_SYMBOL(add);
SYSCALL_DEFINE1(close, int, fd) { return fd; }
