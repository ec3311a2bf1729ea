// Beyond the papers (issue 13): element (r, c) of a 2 x 2-block RGBA32F texture (pack_2x2):
// texel (c/2, r/2), component 2 (r mod 2) + c mod 2. Fragment (c, r) of the target writes it;
// `offset` (even) shifts the window: the target's (0, 0) is element (offset, offset).
uniform sampler2D P;
uniform int offset;
out float result;

void main() {
    ivec2 e = ivec2(floor(WPOS)) + offset;   // (column, row) of the element
    vec4 t = texelFetch(P, e / 2, 0);
    result = t[2 * (e.y % 2) + e.x % 2];
}
