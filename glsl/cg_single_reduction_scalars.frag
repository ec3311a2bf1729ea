// The scalars of one iteration of the single-reduction conjugate gradients of Chronopoulos and
// Gear (1989, "s-step iterative methods for symmetric linear systems"; Saad's book; Ghysels and
// Vanroose's "Chronopoulos/Gear CG"), beyond paper 003, which follows Shewchuk's listing with
// two dot products an iteration, each its own reduction. Here both come from one reduction:
//   gamma = r^T u,  delta = w^T u          (u = M r, w = A u; without Jacobi u = r)
//   beta  = gamma / gamma_old
//   d^T A d = delta - beta gamma / alpha_old    (of d = u + beta d_old, in exact arithmetic)
//   alpha = gamma / d^T A d
// The fragment adds the last RGBA partial sums of that reduction (`size` texels of P, from
// cg_fan.frag TERM 4 or 5: (gamma, delta, ||r||^2 with JACOBI)) and writes the iteration's
// state, a 1 x 2 RGBA stream; each of its two fragments does the same sums and keeps its half:
//   texel 0  (gamma, alpha, beta, ||r||^2)        read by cg_single_reduction_update.frag
//   texel 1  (flag, converged, d^T A d, delta)    flag and converged: the watches
// An alpha_old of 0 (the state CG (re)starts from) marks the first iteration: beta = 0 and
// d^T A d = delta (d = u). The watches are those of cg_converged.frag and
// cg_breakdown_flag.frag: `converged` the first iteration whose ||r||^2 <= threshold (the r
// this iteration starts from: its norm is summed here, one iteration after Shewchuk's listing
// sums it), -1 while none; from it on alpha = beta = 0, so x and r stay as they are. `flag` the
// first iteration with d^T A d <= 0 (+ 0.5 when it overflowed: inf or NaN), -1 while none,
// silent once converged (a converged r may be exactly zero, and then so is d^T A d).
uniform sampler2D P;
uniform sampler2D state;
uniform ivec2 size;
uniform float iteration;
uniform float threshold;
out vec4 result;

void main() {
    vec4 s = vec4(0.0);
    for (int y = 0; y < size.y; y++)
        for (int x = 0; x < size.x; x++)
            s += texelFetch(P, ivec2(x, y), 0);
    float gamma = s.x, delta = s.y;
#if JACOBI
    float rr = s.z;
#else
    float rr = s.x;
#endif
    vec4 old = texelFetch(state, ivec2(0, 0), 0);      // (gamma_old, alpha_old, beta_old, rr_old)
    vec4 watch = texelFetch(state, ivec2(1, 0), 0);    // (flag, converged, ...)
    float conv = watch.y >= 0.0 ? watch.y : (rr <= threshold ? iteration : -1.0);
    bool frozen = conv >= 0.0;
    bool first = old.y == 0.0;
    float beta = (frozen || first) ? 0.0 : gamma / old.x;
    float dAd = first ? delta : delta - beta * gamma / old.y;
    bool overflow = isinf(dAd) || isnan(dAd);
    bool not_positive = !overflow && !(dAd > 0.0);
    float flag = (watch.x >= 0.0 || frozen) ? watch.x
                 : (overflow ? iteration + 0.5 : (not_positive ? iteration : -1.0));
    float alpha = frozen ? 0.0 : gamma / dAd;
    result = WPOS.x < 1.0 ? vec4(gamma, alpha, beta, rr) : vec4(flag, conv, dAd, delta);
}
