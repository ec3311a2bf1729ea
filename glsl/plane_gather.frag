// The k x k block G11 = G(K, K) of the normal equations from the stacked columns G e_{K_b}
// (plane b, folded `width` texels wide, `plane_rows` rows high): fragment (b, a) fetches
// entry K_a of plane b; R_d's delta is added on the diagonal (paper 002, (6)-(7)). Kpos holds
// the entry numbers K_a (a 1 x k stream).
uniform sampler2D P;
uniform sampler2D Kpos;
uniform int width;
uniform int plane_rows;
uniform float delta;
out float result;

void main() {
    int a = int(WPOS.y);
    int b = int(WPOS.x);
    int e = int(texelFetch(Kpos, ivec2(a, 0), 0).r);
    float g = texelFetch(P, ivec2(e % width, b * plane_rows + e / width), 0).r;
    result = (a == b) ? g + delta : g;
}
