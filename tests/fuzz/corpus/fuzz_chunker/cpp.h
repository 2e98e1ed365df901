#ifndef H
#define H
namespace n { template <class T> struct S { T& f() const; }; }
#endif
