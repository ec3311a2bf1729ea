// The vector updates of one conjugate-gradient iteration (Shewchuk's listing, which paper 003
// follows), the scalar computed from the iteration's state texel (cg_scalars.frag) by every
// fragment instead of by a 1 x 1 pass of its own (beyond the papers):
// STEP 1: x + alpha d and r - alpha q in one pass with two render targets (beyond 003's single
//         output; GeForce 6800-class GPUs had four), alpha = delta / d^T q;
// STEP 2: x + alpha d alone (the iterations that recompute r = b - A x);
// STEP 3: d = s + beta d, s = M r (JACOBI: Mdiag r; else r), beta = delta_new / delta_old.
// The scalar is 0 once the convergence watch is set, so converged x, r and d stay as they are.
uniform sampler2D state;      // STEPS 1, 2: (delta, d^T q, flag, converged); STEP 3: the new state
#if STEP <= 2
uniform sampler2D X;
uniform sampler2D D;
#if STEP == 1
uniform sampler2D R;
uniform sampler2D Q;
layout(location = 0) out float x_next;
layout(location = 1) out float r_next;
#else
out float x_next;
#endif
#else
uniform sampler2D previous;   // the state before the new r: (delta_old, ...)
uniform sampler2D R;
uniform sampler2D D;
#if JACOBI
uniform sampler2D Mdiag;
#endif
out float d_next;
#endif

void main() {
    vec4 st = texelFetch(state, ivec2(0), 0);
#if STEP <= 2
    float alpha = st.w >= 0.0 ? 0.0 : st.x / st.y;
    x_next = texRECT(X, WPOS) + alpha * texRECT(D, WPOS);
#if STEP == 1
    r_next = texRECT(R, WPOS) - alpha * texRECT(Q, WPOS);
#endif
#else
    float beta = st.w >= 0.0 ? 0.0 : st.x / texelFetch(previous, ivec2(0), 0).x;
#if JACOBI
    float s = texRECT(Mdiag, WPOS) * texRECT(R, WPOS);
#else
    float s = texRECT(R, WPOS);
#endif
    d_next = s + beta * texRECT(D, WPOS);
#endif
}
