// GNU R as an Interpreter (interpreter.h).
#include "engine/interp/interpreter.h"
#include "engine/interp/r/r_frames.h"

namespace rwd {

namespace {

/// GNU R as an Interpreter: its frames go where libR's frames begin, and no libR frame is
/// shown after that (R's frames are not tied to separate native calls).
class RInterpreter : public Interpreter {
 public:
  explicit RInterpreter(RReader reader) : reader_(std::move(reader)) {}
  std::string name() const override { return "GNU R"; }
  const RReader* r() const override { return &reader_; }
  InterpCode code(InterpMemory& mem, const InterpFrame& frame) const override {
    return reader_.frame_code(mem, frame.address, frame.function);
  }
  std::vector<InterpFrame> stack(InterpMemory& mem, pid_t, StackDepth depth) const override {
    std::vector<InterpFrame> frames = reader_.stack(mem, depth.with_locals);
    if (frames.size() > depth.frames) frames.resize(depth.frames);
    return frames;
  }
  std::vector<MixedFrame> mix(const std::vector<StackFrame>& native,
                              const std::vector<InterpFrame>& r) const override {
    std::vector<MixedFrame> out;
    if (r.empty()) return out;
    bool placed = false;
    for (size_t i = 0; i < native.size(); ++i) {
      const StackFrame& f = native[i];
      bool in_r = f.module && f.module->path().find("libR.so") != std::string::npos;
      if (in_r && !placed) {
        for (size_t k = 0; k < r.size(); ++k) out.push_back({i, int(k)});
        placed = true;
      }
      if (!in_r) out.push_back({i, -1});
    }
    if (!placed)
      for (size_t k = 0; k < r.size(); ++k)
        out.push_back({native.empty() ? 0 : native.size() - 1, int(k)});
    return out;
  }

 private:
  RReader reader_;
};

}  // namespace

std::unique_ptr<Interpreter> find_r_interpreter(const ModuleList& modules, InterpMemory& mem) {
  if (auto r = RReader::find(modules, mem)) return std::make_unique<RInterpreter>(std::move(*r));
  return nullptr;
}

}  // namespace rwd
