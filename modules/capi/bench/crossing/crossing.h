#ifndef CROSSING_H
#define CROSSING_H
int crossing_driver_open(void);
int crossing_driver_launch(void);
int crossing_driver_sync(void);
#endif
