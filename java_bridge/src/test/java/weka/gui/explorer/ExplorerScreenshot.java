package weka.gui.explorer;

import java.awt.Rectangle;
import java.awt.Robot;
import java.awt.image.BufferedImage;
import java.io.File;

import javax.imageio.ImageIO;
import javax.swing.JFrame;
import javax.swing.SwingUtilities;

import weka.classifiers.bayes.HDPBayesNet;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;
import weka.gui.graphvisualizer.GraphVisualizer;

/**
 * Not a test: takes the README's screenshots of the Explorer (needs a display; under Xvfb:
 * {@code xvfb-run -s "-screen 0 1280x900x24" java -cp ... weka.gui.explorer.ExplorerScreenshot
 * vote.arff SPOOL explorer.png graph.png diabetes.arff}). It loads the data, picks HDPBayesNet (kDB-2,
 * 500 iterations), presses Start (10-fold cross-validation through the daemon), waits, and captures
 * the window; then draws a TAN network learnt on the second data set with Weka's graph visualiser,
 * as the Explorer's "Visualize graph" does.
 */
public final class ExplorerScreenshot {

  private ExplorerScreenshot() {
  }

  public static void main(String[] args) throws Exception {
    Instances data = DataSource.read(args[0]);
    data.setClassIndex(data.numAttributes() - 1);
    HDPBayesNet c = new HDPBayesNet();
    c.setOptions(new String[] {"-K", "2", "-I", "500", "-spool", args[1]});
    JFrame frame = new JFrame("Weka Explorer");
    Explorer ex = new Explorer();
    ClassifierPanel[] cp = new ClassifierPanel[1];
    SwingUtilities.invokeAndWait(() -> {
      frame.getContentPane().add(ex);
      frame.setBounds(0, 0, 1200, 860);
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
    Thread.sleep(1000);
    SwingUtilities.invokeAndWait(() -> cp[0].m_StartBut.doClick());
    Thread.sleep(1000);
    long end = System.currentTimeMillis() + 300000;
    while (!cp[0].m_StartBut.isEnabled() && System.currentTimeMillis() < end) {
      Thread.sleep(250);
    }
    Thread.sleep(1500);
    capture(frame, new File(args[2]));

    // the network, as the Explorer's "Visualize graph" shows it
    Instances small = DataSource.read(args[4]); // a smaller network draws more legibly
    small.setClassIndex(small.numAttributes() - 1);
    HDPBayesNet full = new HDPBayesNet();
    full.setOptions(new String[] {"-S", "tan", "-I", "500", "-spool", args[1]});
    full.buildClassifier(small);
    JFrame g = new JFrame("Weka Classifier Graph Visualizer: HDPBayesNet");
    GraphVisualizer gv = new GraphVisualizer();
    SwingUtilities.invokeAndWait(() -> {
      try {
        gv.readBIF(full.graph());
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
      gv.layoutGraph();
      g.getContentPane().add(gv);
      g.setBounds(0, 0, 1200, 700);
      g.setVisible(true);
      g.toFront();
    });
    Thread.sleep(2500);
    capture(g, new File(args[3]));
    System.exit(0);
  }

  static void capture(JFrame frame, File out) throws Exception {
    Rectangle r = frame.getBounds();
    BufferedImage img = new Robot().createScreenCapture(r);
    ImageIO.write(img, "png", out);
    System.out.println("wrote " + out);
  }
}
