// Planes of a stacked texture (the dense rows or columns of a sparse matrix, each a vector
// folded like Y) times the vector Y, element by element: the first half of the inner
// products a_r^T y (paper 003, Fig. 1), for every plane in one pass. Each plane is drawn as
// its own rectangle whose T0 is Y's texel: the plane's window position shifted up by r rows
// of Y, interpolated by the rasterizer.
uniform sampler2D P;
uniform sampler2D Y;
out float result;

void main() {
    result = texRECT(P, WPOS) * texRECT(Y, T0.xy);
}
