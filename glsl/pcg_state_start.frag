// PCG's state at the start (beyond 002): x0 = 0 (hi and lo), r0 = b, in one RGBA texel an entry.
uniform sampler2D B;
out vec4 result;

void main() {
    result = vec4(0.0, 0.0, texelFetch(B, ivec2(WPOS), 0).r, 0.0);
}
