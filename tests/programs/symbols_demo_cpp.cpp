// C++ for the symbol tests: a std::string, a class with a base class, a namespace, a
// template, a reference. Stops in stop_here() like symbols_demo.c.
#include <cstdio>
#include <string>

volatile int sink;

__attribute__((noinline)) void stop_here(int tag) { sink = tag; }

namespace geo {

class Shape {
 public:
  explicit Shape(int sides) : sides_(sides) {}
  virtual ~Shape() = default;
  virtual double area() const = 0;
  int sides() const { return sides_; }

 protected:
  int sides_;
};

class Square : public Shape {
 public:
  explicit Square(double side) : Shape(4), side_(side) {}
  double area() const override {
    stop_here(300);
    return side_ * side_;
  }

 private:
  double side_;
};

template <typename T>
__attribute__((noinline)) T twice(const T& value) {
  stop_here(400);
  return value + value;
}

}  // namespace geo

int main() {
  std::string title = "hello world";
  geo::Square sq(3.0);
  const geo::Shape& shape = sq;
  double a = shape.area();
  int t = geo::twice(21);
  std::printf("%s %g %d %d\n", title.c_str(), a, t, shape.sides());
  return 0;
}
