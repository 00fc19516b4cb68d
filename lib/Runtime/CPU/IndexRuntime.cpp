//===- IndexRuntime.cpp - topk and cumsum for generated CPU code ----------===//
//
// rlx_mir.topk and rlx_mir.cumsum in O(V log k) and O(V) per row: their
// linalg forms (what the GPU's generic path runs) are a rank and a masked sum
// per element, quadratic in the axis, which a 128k vocabulary cannot afford
// (sampling sorts the whole row). rlx-cpu-topk-cumsum calls these on the
// ops' buffers, passed as unranked memrefs of any rank.
//
// The results are the linalg forms' bit for bit: topk orders by value,
// descending, NaN above every number, ties to the lower index; a forward
// cumsum adds in index order from 0, as the linalg reduction does for every
// element (a reverse one adds from the end, which rounds differently than
// the linalg form's index order).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

/// MLIR's unranked memref ABI: the rank and a ranked descriptor.
struct Unranked {
  int64_t rank;
  void *descriptor;
};

/// A ranked descriptor's fields.
template <typename T> struct View {
  T *data; // aligned + offset
  const int64_t *sizes, *strides;
  int64_t rank;
};

template <typename T> View<T> view(const Unranked *m) {
  auto *d = static_cast<char *>(m->descriptor);
  T *aligned = *reinterpret_cast<T **>(d + sizeof(void *));
  int64_t offset = *reinterpret_cast<int64_t *>(d + 2 * sizeof(void *));
  auto *sizes = reinterpret_cast<const int64_t *>(d + 2 * sizeof(void *) + sizeof(int64_t));
  return {aligned + offset, sizes, sizes + m->rank, m->rank};
}

/// Calls f(offsets of a, b, c) for every position of the dims other than
/// `axis` (the three views share those sizes).
template <typename A, typename B, typename C, typename F>
void forEachLine(const View<A> &a, const View<B> &b, const View<C> &c, int64_t axis, F f) {
  int64_t rank = a.rank;
  std::vector<int64_t> at(rank, 0);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && a.sizes[d] == 0)
      return;
  while (true) {
    int64_t oa = 0, ob = 0, oc = 0;
    for (int64_t d = 0; d < rank; ++d) {
      oa += at[d] * a.strides[d];
      ob += at[d] * b.strides[d];
      oc += at[d] * c.strides[d];
    }
    f(oa, ob, oc);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      if (d == axis)
        continue;
      if (++at[d] < a.sizes[d])
        break;
      at[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// A key whose ascending order is topk's: NaN first (0), then larger values
/// first, -0 equal to +0 (the index breaks ties). Floats map to unsigned
/// integers in ascending order (sign set: all bits flipped; else the sign
/// bit set), then flipped for descending; a non-NaN never maps to 0.
template <typename U, typename F> U orderKey(F v) {
  if (std::isnan(v))
    return 0;
  if (v == 0)
    v = 0; // -0 == +0
  U u;
  std::memcpy(&u, &v, sizeof(U));
  constexpr U sign = U(1) << (8 * sizeof(U) - 1);
  U ascending = (u & sign) ? U(~u) : U(u | sign);
  return U(~ascending);
}
inline uint32_t orderKey(float v) { return orderKey<uint32_t>(v); }
inline uint64_t orderKey(double v) { return orderKey<uint64_t>(v); }

/// values/indices[..., p] = the entry of x[..., :] ranked p: larger first,
/// NaN above every number, ties to the lower index: each row's (key,
/// index) pairs sorted (partially for k < V).
template <typename T> void topk(const Unranked *xm, const Unranked *vm, const Unranked *im) {
  View<T> x = view<T>(xm), values = view<T>(vm);
  View<int64_t> indices = view<int64_t>(im);
  int64_t last = x.rank - 1, v = x.sizes[last], k = values.sizes[last];
  if (k == 0)
    return;
  using Key = decltype(orderKey(T()));
  std::vector<std::pair<Key, int64_t>> order(v);
  forEachLine(x, values, indices, last, [&](int64_t ox, int64_t ov, int64_t oi) {
    const T *row = x.data + ox;
    int64_t sx = x.strides[last];
    for (int64_t i = 0; i < v; ++i)
      order[i] = {orderKey(row[i * sx]), i};
    if (k < v)
      std::partial_sort(order.begin(), order.begin() + k, order.end());
    else
      std::sort(order.begin(), order.end());
    for (int64_t p = 0; p < k; ++p) {
      values.data[ov + p * values.strides[last]] = row[order[p].second * sx];
      indices.data[oi + p * indices.strides[last]] = order[p].second;
    }
  });
}

/// out[..., i, ...] = the sum of x along `axis` up to i (exclusive: before
/// i; reverse: from the end).
template <typename T>
void cumsum(const Unranked *xm, const Unranked *om, int64_t axis, bool exclusive, bool reverse) {
  View<T> x = view<T>(xm), out = view<T>(om);
  int64_t n = x.sizes[axis], sx = x.strides[axis], so = out.strides[axis];
  forEachLine(x, out, out, axis, [&](int64_t ox, int64_t oo, int64_t) {
    T sum = T(0);
    for (int64_t s = 0; s < n; ++s) {
      int64_t i = reverse ? n - 1 - s : s;
      T xi = x.data[ox + i * sx];
      if (!exclusive)
        sum += xi;
      out.data[oo + i * so] = sum;
      if (exclusive)
        sum += xi;
    }
  });
}

} // namespace

extern "C" {

void _mlir_ciface_rlx_cpu_topk_f32(Unranked *x, Unranked *values, Unranked *indices) {
  topk<float>(x, values, indices);
}

void _mlir_ciface_rlx_cpu_topk_f64(Unranked *x, Unranked *values, Unranked *indices) {
  topk<double>(x, values, indices);
}

void _mlir_ciface_rlx_cpu_cumsum_f32(Unranked *x, Unranked *out, int64_t axis, int32_t exclusive,
                                     int32_t reverse) {
  cumsum<float>(x, out, axis, exclusive, reverse);
}

void _mlir_ciface_rlx_cpu_cumsum_f64(Unranked *x, Unranked *out, int64_t axis, int32_t exclusive,
                                     int32_t reverse) {
  cumsum<double>(x, out, axis, exclusive, reverse);
}

} // extern "C"
