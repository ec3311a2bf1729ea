// PCG's solution update x + (n / d) p with x in float-float (float_float.glsl: hi in .r, lo in
// .g of an RGBA32F texel), p a float32 stream and n, d 1 x 1 streams (alpha = r^T z / p^T q, left
// on the GPU by the sum reductions, as saxpy_ratio). Beyond 002 (whose PCG ran in double on the
// CPU): in float32 a step alpha p below half an ulp of x is lost, and late in a degenerate LP's
// solve PCG's true residual then stalls while its recurrence still falls (measured on nug20);
// the product alpha p is exact here (2Prod) and the sum keeps about 48 bits. A ratio that is
// not finite counts as 0, as in saxpy_ratio.
uniform sampler2D X;        // p (float32)
uniform sampler2D Y;        // x (float-float)
uniform sampler2D N;
uniform sampler2D D;
out vec4 result;

void main() {
    float d = texelFetch(D, ivec2(0, 0), 0).r;
    float ratio = d == 0.0 ? 0.0 : texelFetch(N, ivec2(0, 0), 0).r / d;
    if (!(abs(ratio) < 3.0e38)) ratio = 0.0;      // inf and NaN (where isnan may not see it)
    vec2 step = two_prod(ratio, texRECT(X, WPOS));
    result = vec4(ff_add(texRECT4(Y, WPOS).rg, step), 0.0, 0.0);
}
