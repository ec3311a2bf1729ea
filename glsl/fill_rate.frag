// Fill-rate probe of `python -m gpgpu bench` (not a kernel of the papers): a full-screen pass
// in which every fragment makes READS texture reads at its own texel (0 to 3) and writes one
// texel of COMPONENTS channels (1: R32F, 4: RGBA32F). Its fragments per second are the limit
// the papers' kernels are measured against: the update kernels read 3 texels and write 1.
uniform sampler2D A;
uniform sampler2D B;
uniform sampler2D C;
#if COMPONENTS == 4
out vec4 result;
#else
out float result;
#endif

void main() {
    vec4 v = vec4(WPOS, 1.0, 2.0);
#if READS >= 1
    v += texRECT4(A, WPOS);
#endif
#if READS >= 2
    v += texRECT4(B, WPOS);
#endif
#if READS >= 3
    v += texRECT4(C, WPOS);
#endif
#if COMPONENTS == 4
    result = v;
#else
    result = v.x + v.y;
#endif
}
