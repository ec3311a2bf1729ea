// The normal matrix equilibrated before its factor (beyond the papers): C(i, j) s(i) s(j), with s
// the powers of two nearest 1 / sqrt(C(i, i)) (gpgpu.adat.equilibration). A power of two changes
// an exponent only, so the factor of the scaled matrix is the factor of C scaled, rounding for
// rounding, while its entries lie near 1: inside float32's range, where C's own factor could
// overflow (entries of 1e21 squared) or flush its float-float low parts to zero. The fragment at
// texel (j, i) reads C there and s at i and at j. FLOAT_FLOAT: the two components (hi, lo)
// scaled alike (an RG32F texel: the .ba read as 0 and 1 are not stored).
uniform sampler2D C;
uniform sampler2D s;
#ifdef FLOAT_FLOAT
out vec4 result;
#else
out float result;
#endif

void main() {
    float scale = texRECT(s, vec2(WPOS.x, 0.5)) * texRECT(s, vec2(WPOS.y, 0.5));
#ifdef FLOAT_FLOAT
    result = texRECT4(C, WPOS) * scale;
#else
    result = texRECT(C, WPOS) * scale;
#endif
}
