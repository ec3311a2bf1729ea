// Paper 003, Figs. 1-2: "component wise multiplication into a temporary vector ... of the next
// highest power of two": x .* y, read at the interpolated T0 (the vector's region), written
// into the pyramid's base at the window position (its padding is filled with zeros apart).
uniform sampler2D X;
uniform sampler2D Y;
out float result;

void main() {
    result = texRECT(X, T0.xy) * texRECT(Y, T0.xy);
}
