// Counter-based random numbers: the exact Philox construction behind the
// random_uniform / random_normal primitives, callable from plain C++.
//
// The stream of a lane is a pure function of (key, counter): there is no
// hidden state. Element `index` of a random primitive's output (row-major over
// the attr shape) is drawn from Philox4x32-10 block b = index / 2, word
// w = index % 2:
//
//   philox key  = {lo32(key), hi32(key)}
//   philox ctr  = {lo32(b), hi32(b), lo32(counter), hi32(counter)}
//   r[0..3]     = Philox4x32-10(ctr, key)                  (Random123)
//   bits[0]     = r[0] | r[1] << 32,  bits[1] = r[2] | r[3] << 32
//   uniform(w)  = ((bits[w] >> 12) + 0.5) * 2^-52           in (0, 1), exact
//   normal      = Box-Muller on the block's two uniforms u0 = uniform(0),
//                 u1 = uniform(1): rho = std::sqrt(-2 * math::Log(u0)),
//                 theta = 6.283185307179586 * u1 (the double nearest 2*pi),
//                 normal(0) = rho * math::Cos(theta), normal(1) = rho * math::Sin(theta)
//                 (support/math/math.h: deterministic, the same on every CPU)
//
// Uniforms lie in [2^-53, 1 - 2^-53]: never 0 or 1, so log(u) is finite and
// normals are finite (|z| < 8.58). The primitive runs log, cos and sin
// across lanes (math::Eval), these helpers one value at a time, with the
// same bits.
#ifndef AUTOBATCH_BACKENDS_RANDOM_H_
#define AUTOBATCH_BACKENDS_RANDOM_H_

#include <array>
#include <cstdint>

namespace autobatch {

// The two 64-bit words of Philox block `block` for (key, counter).
std::array<uint64_t, 2> PhiloxBits(uint64_t key, uint64_t counter, uint64_t block);

// PhiloxBits for `lanes` lanes at once: bits0[l], bits1[l] = PhiloxBits(key[l],
// counter[l], block). The same bits; the rounds run across lanes so that the
// compiler vectorizes them.
void PhiloxBitsLanes(const uint64_t* key, const uint64_t* counter, uint64_t block,
                     int64_t lanes, uint64_t* bits0, uint64_t* bits1);

// The random_uniform (normal = false) / random_normal primitive for `lanes`
// lanes holding key[l] and counter[l]: lane l's `elements` values go to
// out[l * elements, (l + 1) * elements). Every element equals PhiloxUniform /
// PhiloxNormal(key[l], counter[l], index).
void RandomLanes(const uint64_t* key, const uint64_t* counter, int64_t lanes,
                 int64_t elements, bool normal, double* out);

// ((bits >> 12) + 0.5) * 2^-52: a double in the open interval (0, 1).
double UniformFromBits(uint64_t bits);

// The block's two standard normals from its two uniforms (see above).
std::array<double, 2> BoxMuller(double u0, double u1);

// Element `index` (>= 0) of random_uniform / random_normal with this key and
// counter: the primitive's output element `index` of a lane holding (key,
// counter), bit for bit, whatever the batch.
double PhiloxUniform(uint64_t key, uint64_t counter, int64_t index);
double PhiloxNormal(uint64_t key, uint64_t counter, int64_t index);

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_RANDOM_H_
