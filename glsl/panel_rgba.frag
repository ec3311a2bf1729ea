// Beyond the papers (issue 13): the factored panel with 4 columns a texel (RGBA32F), so that
// the rank-b update fetches b / 4 texels per row instead of b: texel (q, i) holds
// L(i, 4q .. 4q+3) of the R32F panel.
uniform sampler2D L;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));
    int c = 4 * t.x;
    result = vec4(texelFetch(L, ivec2(c, t.y), 0).r, texelFetch(L, ivec2(c + 1, t.y), 0).r,
                  texelFetch(L, ivec2(c + 2, t.y), 0).r, texelFetch(L, ivec2(c + 3, t.y), 0).r);
}
