// Beyond the papers (issue 13): element (r, c) of a 2 x 2-block RGBA32F texture (pack_2x2):
// texel (c/2, r/2), component 2 (r mod 2) + c mod 2. Fragment (x, y) of the target writes
// element (origin.y + y, origin.x + x): `origin` (even) is the (column, row) of the element
// that the target's texel (0, 0) receives.
uniform sampler2D P;
uniform ivec2 origin;
out float result;

void main() {
    ivec2 e = ivec2(floor(WPOS)) + origin;   // (column, row) of the element
    vec4 t = texelFetch(P, e / 2, 0);
    result = t[2 * (e.y % 2) + e.x % 2];
}
