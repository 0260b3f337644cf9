package weka.gui.explorer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.GraphicsEnvironment;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import javax.swing.JFrame;
import javax.swing.JLabel;
import javax.swing.JTextArea;
import javax.swing.SwingUtilities;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import weka.classifiers.bayes.HDPBayesNet;
import weka.classifiers.bayes.PythonSideAccess;
import weka.classifiers.bayes.hdpbnc.SpoolClient;
import weka.core.Instances;
import weka.gui.LogPanel;

/**
 * The Explorer as a user drives it (needs a display: {@code xvfb-run}, which tests/test_java_bridge.py uses
 * when Xvfb is installed; skipped, saying so, without one): Start shows the daemon's progress in the
 * status line, and Stop, pressed five times during sampling, each time cancels the daemon's job, removes
 * its folders, and leaves the Classify panel ready for the next Start.
 */
class ExplorerStopIT {

  @TempDir
  static Path s_Spool;

  @AfterAll
  static void stopDaemons() throws Exception {
    if (Files.isDirectory(s_Spool)) {
      assertTrue(SpoolClient.stopDaemons(s_Spool, 60000));
    }
  }

  static Object field(Object target, Class<?> declaring, String name) throws Exception {
    Field f = declaring.getDeclaredField(name);
    f.setAccessible(true);
    return f.get(target);
  }

  static String onEdt(java.util.concurrent.Callable<String> c) throws Exception {
    String[] out = new String[1];
    Exception[] err = new Exception[1];
    SwingUtilities.invokeAndWait(() -> {
      try {
        out[0] = c.call();
      } catch (Exception e) {
        err[0] = e;
      }
    });
    if (err[0] != null) {
      throw err[0];
    }
    return out[0];
  }

  @Test
  void stopCancelsTheJobFiveTimesOutOfFiveAndThePanelStaysUsable() throws Exception {
    Assumptions.assumeFalse(GraphicsEnvironment.isHeadless(), "skipped: no display (run under xvfb-run)");
    PythonSideAccess.assumeHdpPlugin();
    Instances data = PythonSideAccess.data("vote.arff", "Class");
    HDPBayesNet c = new HDPBayesNet();
    c.setStructure(new weka.core.SelectedTag("kdb", HDPBayesNet.TAGS_STRUCTURE));
    c.setIterations(10_000_000);
    c.setK(2);
    c.setSpoolDirectory(s_Spool.toFile());
    c.setPythonExecutable(PythonSideAccess.python());
    JFrame frame = new JFrame("Weka Explorer");
    Explorer ex = new Explorer();
    ClassifierPanel[] cp = new ClassifierPanel[1];
    SwingUtilities.invokeAndWait(() -> {
      frame.getContentPane().add(ex);
      frame.setBounds(0, 0, 1000, 700);
      frame.setVisible(true);
      ex.getPreprocessPanel().setInstances(data);
      for (Explorer.ExplorerPanel p : ex.getPanels()) {
        if (p instanceof ClassifierPanel) {
          cp[0] = (ClassifierPanel) p;
        }
      }
      ex.getTabbedPane().setSelectedComponent(cp[0]);
      cp[0].m_ClassifierEditor.setValue(c);
    });
    JLabel status = (JLabel) field(ex.m_LogPanel, LogPanel.class, "m_StatusLab");
    JTextArea log = (JTextArea) field(ex.m_LogPanel, LogPanel.class, "m_LogText");
    try {
      for (int i = 0; i < 5; i++) {
        SwingUtilities.invokeAndWait(() -> cp[0].m_StartBut.doClick());
        Path job = PythonSideAccess.awaitClaimed(s_Spool);
        // the daemon's progress reaches the status line
        long end = System.currentTimeMillis() + 60000;
        while (!onEdt(status::getText).contains("iteration") && System.currentTimeMillis() < end) {
          Thread.sleep(50);
        }
        assertTrue(onEdt(status::getText).startsWith("HDPBayesNet: training, iteration")
          || onEdt(status::getText).startsWith("HDPBayesNet: sampling, iteration"), onEdt(status::getText));
        Thread.sleep(i * 150); // Stop at different moments of the polling
        SwingUtilities.invokeAndWait(() -> cp[0].m_StopBut.doClick()); // interrupt(), then stop() at once
        assertEquals("cancelled", PythonSideAccess.awaitCancelledAndRemoved(s_Spool, job.getFileName().toString()));
        end = System.currentTimeMillis() + 30000;
        while (!(onEdt(() -> "" + cp[0].m_StartBut.isEnabled()).equals("true") && cp[0].m_RunThread == null)
          && System.currentTimeMillis() < end) {
          Thread.sleep(50);
        }
        assertTrue(cp[0].m_StartBut.isEnabled(), "the Classify panel is stuck after Stop " + (i + 1));
        assertFalse(cp[0].m_StopBut.isEnabled());
      }
      // the log panel tells what happened: the daemon starting (and its one-time compilation), each Stop
      String text = onEdt(log::getText);
      assertTrue(text.contains("HDPBayesNet: starting the hdp-bnc daemon") && text.contains("compiles"), text);
      assertEquals(5, text.split("HDPBayesNet: training stopped: job ", -1).length - 1, text);
      try (Stream<Path> s = Files.list(s_Spool.resolve("done"))) {
        assertEquals(0, s.count(), "a stopped job ran to the end");
      }
    } finally {
      SwingUtilities.invokeAndWait(frame::dispose);
    }
  }
}
