// PCG's update of 002 section 2.1 ([9]) for one entry, x and r in one RGBA texel (beyond 002:
// one pass for both): x' = x + alpha p, r' = r - alpha q with q = G_R p = A Theta~ A^T p +
// delta p, whose sparse part y = A Theta~ A^T p the products left. With FLOAT_FLOAT x is
// float-float (.r hi, .g lo: alpha p exact by 2Prod, the sum to about 48 bits), else float32
// in .r (.g stays 0). alpha is texel 1's .r of the scalars (pcg_step_scalars); where it is 0
// (a breakdown, or r already 0) the texel is left as it is.
uniform sampler2D XR;       // (x hi, x lo, r, 0)
uniform sampler2D P;
uniform sampler2D Y;        // A Theta~ A^T p
uniform sampler2D Sc;       // pcg_step_scalars
uniform float delta;
out vec4 result;

void main() {
    ivec2 t = ivec2(WPOS);
    vec4 xr = texelFetch(XR, t, 0);
    float alpha = texelFetch(Sc, ivec2(1, 0), 0).r;
    if (alpha == 0.0) {         // a step the scalars refused (pcg_step_scalars): x and r stay,
        result = xr;            // whatever p and q hold
        return;
    }
    float p = texelFetch(P, t, 0).r;
    float q = texelFetch(Y, t, 0).r + delta * p;
#ifdef FLOAT_FLOAT
    vec2 x = ff_add(xr.rg, two_prod(alpha, p));
#else
    vec2 x = vec2(xr.r + alpha * p, 0.0);
#endif
    result = vec4(x, xr.b - alpha * q, 0.0);
}
