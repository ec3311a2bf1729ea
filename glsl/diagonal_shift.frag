// M(i, i) += delta: drawn on the points of diagonal_points.vert with additive blending, so the
// fragment only gives the amount and the blender adds it to the texel (paper 002, (6):
// G_R = A Theta~ A^T + R_d with R_d = delta I; beyond paper 000, whose normal matrix has no shift).
uniform float delta;
out float result;

void main() {
    result = delta;
}
