// A function with sixteen paths, which the complexity check must refuse.
namespace attnlab::app {

int branchy(int x)
{
    int n = 0;
    if (x == 1) n += 1;
    if (x == 2) n += 2;
    if (x == 3) n += 3;
    if (x == 4) n += 4;
    if (x == 5) n += 5;
    if (x == 6) n += 6;
    if (x == 7) n += 7;
    if (x == 8) n += 8;
    if (x == 9) n += 9;
    if (x == 10) n += 10;
    if (x == 11) n += 11;
    if (x == 12) n += 12;
    if (x == 13) n += 13;
    if (x == 14) n += 14;
    if (x == 15) n += 15;
    return n;
}

}  // namespace attnlab::app
