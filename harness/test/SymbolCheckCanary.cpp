// A symbol in the compiler's namespace: the independence check must flag this library.
namespace dq::rt {
int symbolCheckCanary() {
  return 1;
}
} // namespace dq::rt
