// Beyond the papers (issues 11 and 13): a whole step k of the outer-product Cholesky in one
// pass, for problems bound by the cost of a pass (the interior point method's normal
// equations). Algorithm 2 of 000 takes four passes for the pivot (square root, copy,
// normalization, copy) and one for the update; here one triangle over the columns k .. i of
// the rows i >= k does all of them from the state before the step (S):
//     L(k, k) = sqrt(d),  L(i, k) = S(i, k) / sqrt(d),  L(i, j) = S(i, j) - S(i, k) S(j, k) / d,
// with d = S(k, k) (replaced by `huge` when the guard finds it not above tolerance x M0(k, k),
// as square_root_guarded does), and S(j, k) fetched through the swizzle as in Kernel 5 of 001.
// The same primitive also covers column k - 1 (finished at the step before), which is copied,
// so both textures of the ping-pong pair hold every finished column. The products are the
// separate passes' to float32 rounding (S(i,k) S(j,k) / d instead of (S(i,k)/r)(S(j,k)/r)).
uniform sampler2D L;
uniform sampler2D M0;
uniform int k;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column j, row i)
    if (t.x < k) {                           // column k - 1: copied
        result = texelFetch(L, t, 0).r;
        return;
    }
    float d = texelFetch(L, ivec2(k, k), 0).r;
    if (guarded) {
        bool ok = d > tolerance * texelFetch(M0, ivec2(k, k), 0).r && !isinf(d) && !isnan(d);
        d = ok ? d : huge;
    }
    float lik = texelFetch(L, ivec2(k, t.y), 0).r;
    if (t.x == k)
        result = t.y == k ? sqrt(d) : lik / sqrt(d);
    else
        result = texelFetch(L, t, 0).r - lik * texelFetch(L, ivec2(k, t.x), 0).r / d;
}
