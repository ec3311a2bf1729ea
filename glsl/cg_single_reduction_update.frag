// The vector updates of one iteration of the single-reduction conjugate gradients of
// Chronopoulos and Gear (1989, "s-step iterative methods for symmetric linear systems"; beyond
// paper 003, whose Shewchuk listing updates x, r and d in passes of their own), in one pass
// with four render targets (five with Jacobi; GL 3.3 guarantees eight, GeForce 6800-class GPUs
// had four):
//   d = u + beta d        the search direction (u = M r; without Jacobi u = r)
//   s = w + beta s        s = A d by recurrence (w = A u, the iteration's one product)
//   x = x + alpha d
//   r = r - alpha s
//   u = M r               (JACOBI: Mdiag r of the new r, the next product's input)
// alpha and beta from texel 0 of the state the iteration's scalars fragment wrote
// (cg_single_reduction_scalars.frag): both 0 once converged, so x and r stay as they are;
// beta 0 at the first iteration, where d = u and s = w whatever d and s held before.
uniform sampler2D state;      // texel 0: (gamma, alpha, beta, ||r||^2)
uniform sampler2D X;
uniform sampler2D R;
uniform sampler2D D;
uniform sampler2D S;
uniform sampler2D W;
#if JACOBI
uniform sampler2D U;
uniform sampler2D Mdiag;
#endif
layout(location = 0) out float x_next;
layout(location = 1) out float r_next;
layout(location = 2) out float d_next;
layout(location = 3) out float s_next;
#if JACOBI
layout(location = 4) out float u_next;
#endif

void main() {
    vec4 st = texelFetch(state, ivec2(0, 0), 0);
    float alpha = st.y, beta = st.z;
    float r = texRECT(R, WPOS);
#if JACOBI
    float u = texRECT(U, WPOS);
#else
    float u = r;
#endif
    float w = texRECT(W, WPOS);
    float d = beta == 0.0 ? u : u + beta * texRECT(D, WPOS);
    float s = beta == 0.0 ? w : w + beta * texRECT(S, WPOS);
    d_next = d;
    s_next = s;
    float rn = r - alpha * s;
    x_next = texRECT(X, WPOS) + alpha * d;
    r_next = rn;
#if JACOBI
    u_next = texRECT(Mdiag, WPOS) * rn;
#endif
}
