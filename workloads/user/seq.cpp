// Sequential C++ kernel at three granularities, built with
// -finstrument-functions: classes, their inline accessors and virtual calls
// are all functions, each a pair of probes when measured.
//
//   seq_cpp fine N     N iterations of a cell's inline member functions
//                      (five calls each)
//   seq_cpp medium N   N virtual calls of mixers of MEDIUM_ROUNDS rounds
//   seq_cpp coarse N   N virtual calls of mixers of COARSE_ROUNDS rounds
//
// Prints the kernel's wall time (one JSON line) and a checksum.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "timing.h"

namespace {

constexpr long MEDIUM_ROUNDS = 20;
constexpr long COARSE_ROUNDS = 96;
constexpr std::uint64_t GOLDEN = 0x9E3779B97F4A7C15ull;

// A value with accessors, the small functions C++ code is full of.
class Cell {
public:
    std::uint64_t get() const { return v_; }
    void set(std::uint64_t x) { v_ = x; }
    std::uint64_t plus(std::uint64_t i) const { return get() + i; }
    std::uint64_t folded(std::uint64_t i) const
    {
        std::uint64_t y = plus(i);
        return y ^ (y >> 29);
    }
    void advance(std::uint64_t i) { set(folded(i) * GOLDEN); }

private:
    std::uint64_t v_ = 1;
};

class Mixer {
public:
    explicit Mixer(long rounds) : rounds_(rounds) {}
    virtual ~Mixer() = default;
    virtual std::uint64_t apply(std::uint64_t x) const = 0;

protected:
    long rounds_;
};

class Multiply : public Mixer {
public:
    using Mixer::Mixer;
    std::uint64_t apply(std::uint64_t x) const override
    {
        for (long r = 0; r < rounds_; r++)
            x = (x ^ (x >> 29)) * GOLDEN;
        return x;
    }
};

class XorShift : public Mixer {
public:
    using Mixer::Mixer;
    std::uint64_t apply(std::uint64_t x) const override
    {
        for (long r = 0; r < rounds_; r++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x += GOLDEN;
        }
        return x;
    }
};

class Rotate : public Mixer {
public:
    using Mixer::Mixer;
    std::uint64_t apply(std::uint64_t x) const override
    {
        for (long r = 0; r < rounds_; r++)
            x = ((x << 23) | (x >> 41)) * GOLDEN + 1;
        return x;
    }
};

}  // namespace

extern "C" __attribute__((noinline)) std::uint64_t timed_kernel(long rounds, long n)
{
    if (rounds == 0) {
        Cell c;
        for (long i = 0; i < n; i++)
            c.advance(static_cast<std::uint64_t>(i));
        return c.get();
    }
    std::vector<std::unique_ptr<Mixer>> mixers;
    mixers.push_back(std::make_unique<Multiply>(rounds));
    mixers.push_back(std::make_unique<XorShift>(rounds));
    mixers.push_back(std::make_unique<Rotate>(rounds));
    // Raw pointers in the loop: through the vector and unique_ptr, every
    // call would also pass four inline library functions (and their probes).
    const Mixer *m[3] = {mixers[0].get(), mixers[1].get(), mixers[2].get()};
    std::uint64_t x = 1;
    for (long i = 0; i < n; i++)
        x = m[i % 3]->apply(x + static_cast<std::uint64_t>(i));
    return x;
}

int main(int argc, char **argv)
{
    static const char *const kernels[] = {"fine", "medium", "coarse", nullptr};
    const char *kernel;
    long n = parse_args(argc, argv, kernels, &kernel);
    long rounds = kernel[0] == 'f' ? 0 : kernel[0] == 'm' ? MEDIUM_ROUNDS : COARSE_ROUNDS;
    double t0 = now_s();
    std::uint64_t x = timed_kernel(rounds, n);
    double t1 = now_s();
    report_kernel(kernel, 0, t1 - t0);
    std::printf("checksum %llu\n", static_cast<unsigned long long>(x));
    return 0;
}
