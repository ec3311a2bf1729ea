// Float-float ("double-float") arithmetic, beyond the papers (issue 11): a value is the
// unevaluated sum hi + lo of two float32 held in .x and .y of a vec2 (in textures, .r and .g
// of an RGBA32F texel), |lo| <= ulp(hi) / 2: about 48 significant bits with float32's exponent
// range. The algorithms are the double-word ones of Joldes, Muller and Popescu, "Tight and
// rigorous error bounds for basic building blocks of double-word arithmetic" (ACM TOMS 44,
// 2017): TwoSum, Fast2Sum, 2Prod (Dekker), DWPlusDW (their Algorithm 6), DWTimesDW (Algorithm
// 12, its low-order terms by products and sums); the quotient and the square root are one
// float32 estimate with two (one) corrections by the remainder. Every intermediate is
// `precise` (GL_ARB_gpu_shader5): a compiler may otherwise contract or reorder them and lose
// the rounding errors they recover.
vec2 two_sum(float a, float b) {
    precise float s = a + b;
    precise float bb = s - a;
    precise float e = (a - (s - bb)) + (b - bb);
    return vec2(s, e);
}

vec2 fast_two_sum(float a, float b) {          // |a| >= |b| (or a = 0)
    precise float s = a + b;
    precise float e = b - (s - a);
    return vec2(s, e);
}

// 2Prod by Veltkamp's split and Dekker's product where fma() may round twice: Mesa's llvmpipe
// computes fma() as a product and a sum, each rounded (measured: the error term came out 0), and
// Dekker's form needs only correctly rounded float32 products and sums. The split's 4097 a would
// overflow above about 8e34; such products (the guard's huge pivot is 1e30) keep their
// float32 value.
vec2 veltkamp_split(float a) {
    precise float c = 4097.0 * a;
    precise float hi = c - (c - a);
    precise float lo = a - hi;
    return vec2(hi, lo);
}

// Where the renderer's fma() rounds once (FF_FMA, defined by gpgpu.float_float from a probe of the
// context: NVIDIA's drivers, not llvmpipe), 2Prod is that fma: e = fma(a, b, -p) is the product's
// exact rounding error, in one instruction instead of Dekker's two splits and four products.
vec2 two_prod(float a, float b) {
    precise float p = a * b;
#ifdef FF_FMA
    if (isinf(p))
        return vec2(p, 0.0);
    precise float e = fma(a, b, -p);
#else
    if (abs(a) > 1e34 || abs(b) > 1e34 || isinf(p))
        return vec2(p, 0.0);
    vec2 x = veltkamp_split(a);
    vec2 y = veltkamp_split(b);
    precise float e = ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y;
#endif
    return vec2(p, e);
}

vec2 ff_add(vec2 x, vec2 y) {
    vec2 s = two_sum(x.x, y.x);
    vec2 t = two_sum(x.y, y.y);
    precise float c = s.y + t.x;
    vec2 v = fast_two_sum(s.x, c);
    precise float w = t.y + v.y;
    return fast_two_sum(v.x, w);
}

vec2 ff_sub(vec2 x, vec2 y) {
    return ff_add(x, -y);
}

vec2 ff_mul(vec2 x, vec2 y) {
    vec2 c = two_prod(x.x, y.x);
    precise float t0 = x.y * y.y;
    precise float t1 = x.x * y.y + t0;
    precise float c2 = x.y * y.x + t1;
    precise float c3 = c.y + c2;
    return fast_two_sum(c.x, c3);
}

vec2 ff_mul_f(vec2 x, float y) {               // x times a float32
    vec2 c = two_prod(x.x, y);
    precise float c3 = x.y * y + c.y;
    return fast_two_sum(c.x, c3);
}

vec2 ff_div(vec2 x, vec2 y) {
    precise float q1 = x.x / y.x;              // the float32 estimate (the GPU's division may
    vec2 r = ff_sub(x, ff_mul_f(y, q1));       // be off by an ulp or two), then the remainder
    precise float q2 = r.x / y.x;
    r = ff_sub(r, ff_mul_f(y, q2));
    precise float q3 = r.x / y.x;
    return ff_add(fast_two_sum(q1, q2), vec2(q3, 0.0));
}

vec2 ff_sqrt(vec2 x) {
    if (x.x <= 0.0)
        return vec2(sqrt(x.x), 0.0);           // 0 (or NaN below 0, as float32's square root)
    precise float s = sqrt(x.x);
    vec2 r = ff_sub(x, two_prod(s, s));
    precise float c = r.x / (2.0 * s);
    return fast_two_sum(s, c);
}

vec2 ffRECT(sampler2D A, vec2 c) {             // texel floor(c) of an RGBA32F float-float texture
    return texelFetch(A, ivec2(floor(c)), 0).rg;
}
