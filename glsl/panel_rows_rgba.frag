// Beyond the papers (issue 13, blocked LU): the row panel U12 with 4 rows a texel (RGBA32F),
// texel (c, q) holding U(4q .. 4q+3, c), for the rank-b update's fetches.
uniform sampler2D U;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));
    int r = 4 * t.y;
    result = vec4(texelFetch(U, ivec2(t.x, r), 0).r, texelFetch(U, ivec2(t.x, r + 1), 0).r,
                  texelFetch(U, ivec2(t.x, r + 2), 0).r, texelFetch(U, ivec2(t.x, r + 3), 0).r);
}
